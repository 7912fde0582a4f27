package soql

import "strings"

// This file is Socrata's type rules as data: the types, the type classes,
// the signatures (overloads) of the functions and operators, and the
// conversions a literal takes part in. The checker (types.go) and the
// offline portal (package localportal, through Signatures and
// LiteralTypes) read them.
//
// Everything here is written from reading socrata-platform/soql-reference
// (facts, not code). Each entry cites where Socrata defines it, by the
// name of its definition, which stays put across the file's versions
// where line numbers do not:
//
//   - F: soql-stdlib/src/main/scala/com/socrata/soql/functions/SoQLFunctions.scala
//     (the version that defines round, date_add and the caseless family),
//     "F Gt" is its `val Gt`.
//   - C: soql-stdlib/.../functions/SoQLTypeClasses.scala (the classes).
//   - I: soql-stdlib/.../functions/SoQLTypeInfo.scala (stringConversions,
//     numberLiteralExpr, isOrdered, isBoolean, isGroupable).
//   - E: soql-analyzer/.../exceptions/SoQLException.scala (error texts).
//   - D: dev.socrata.com docs (datatypes/*.md, functions/*.md).
//
// Where the sources disagree between versions (min and max of a boolean,
// a number literal against a double), the rule that accepts more is kept:
// the checker only refuses what the portal surely refuses.

// typeNames are the SoQL types, as the X-SODA2-Types header names them.
var typeNames = [...]string{
	"text", "number", "double", "money", "boolean",
	"fixed_timestamp", "floating_timestamp", "date", "time", "interval",
	"point", "multipoint", "line", "multiline", "polygon", "multipolygon",
	"location", "url", "phone", "photo", "document", "blob", "json",
}

// typeSet is a set of SoQL types, one bit per typeNames entry. The empty
// set stands for "unknown": any type.
type typeSet uint32

var typeBits = func() map[string]typeSet {
	m := make(map[string]typeSet, len(typeNames))
	for i, n := range typeNames {
		m[n] = 1 << i
	}
	return m
}()

// setOf is the set of the named types; an unknown name adds nothing.
func setOf(names ...string) typeSet {
	var s typeSet
	for _, n := range names {
		s |= typeBits[n]
	}
	return s
}

// allTypes is every type (Socrata's AllTypes).
const allTypes = typeSet(1<<len(typeNames)) - 1

func (s typeSet) has(name string) bool { return s&typeBits[name] != 0 }

// names lists the set's types in typeNames order.
func (s typeSet) names() []string {
	var out []string
	for i, n := range typeNames {
		if s&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// single is the set's one type, or "".
func (s typeSet) single() string {
	if s == 0 || s&(s-1) != 0 {
		return ""
	}
	return s.names()[0]
}

// The type classes (C).
var (
	// C Ordered: what <, >, BETWEEN, ORDER BY, min and max take.
	classOrderedSet = setOf("text", "number", "double", "money", "boolean", "fixed_timestamp",
		"floating_timestamp", "date", "time", "url")
	// C PointLike ++ LineLike ++ PolygonLike = GeospatialLike.
	classGeoSet = setOf("point", "multipoint", "line", "multiline", "polygon", "multipolygon")
	// C Equatable: what = and != and GROUP BY take (document is in no class).
	classEquatableSet = classOrderedSet | classGeoSet | setOf("blob", "phone", "photo", "location", "url", "json")
	// C NumLike and RealNumLike.
	classNumLikeSet  = setOf("number", "double", "money")
	classRealNumSet  = setOf("number", "double")
	classTimestampTS = setOf("fixed_timestamp", "floating_timestamp") // C TimestampLike
	classPointLike   = setOf("point", "multipoint")
	classLineLike    = setOf("line", "multiline")
	classPolygonLike = setOf("polygon", "multipolygon")
)

// Signature is one overload of a SoQL function or operator.
type Signature struct {
	// Name is the function's lower-case name; operators are "op$" and the
	// operator ("op$+", "op$between"), casts "cast$" and the type.
	Name string
	// Params are the parameters: a type name, or a type variable ("a",
	// "b") constrained by Vars. Repeat follows them any number of times
	// (varargs).
	Params, Repeat []string
	Vars           map[string]typeSet
	// Result is a type name or one of the variables.
	Result    string
	Aggregate bool
	// Source is where Socrata defines the overload (see the file comment).
	Source string
}

// ArityOK reports whether the overload takes n arguments.
func (s *Signature) ArityOK(n int) bool {
	if n == len(s.Params) {
		return true
	}
	return len(s.Repeat) > 0 && n > len(s.Params) && (n-len(s.Params))%len(s.Repeat) == 0
}

// param is the parameter the i-th argument binds to.
func (s *Signature) param(i int) string {
	if i < len(s.Params) {
		return s.Params[i]
	}
	return s.Repeat[(i-len(s.Params))%len(s.Repeat)]
}

// allowed is the set of types parameter p accepts ("" for a variable
// without a constraint: any type).
func (s *Signature) allowed(p string) typeSet {
	if b, ok := typeBits[p]; ok {
		return b
	}
	if c, ok := s.Vars[p]; ok {
		return c
	}
	return allTypes
}

func isTypeVar(p string) bool { _, ok := typeBits[p]; return !ok }

// mono is a monomorphic overload: result(params...).
func mono(src, name, result string, params ...string) Signature {
	return Signature{Name: name, Params: params, Result: result, Source: src}
}

// poly is a polymorphic overload whose variables are constrained by vars
// (a nil map: unconstrained).
func poly(src, name string, vars map[string]typeSet, result string, params ...string) Signature {
	return Signature{Name: name, Params: params, Vars: vars, Result: result, Source: src}
}

func agg(s Signature) Signature { s.Aggregate = true; return s }

func varargs(s Signature, repeat ...string) Signature { s.Repeat = repeat; return s }

// a is the common constraint map {a: class}.
func a(class typeSet) map[string]typeSet { return map[string]typeSet{"a": class} }

func ab(ca, cb typeSet) map[string]typeSet { return map[string]typeSet{"a": ca, "b": cb} }

// signatures are the overloads the checker knows. A name missing here is
// typed unknown and never refused (the portal decides).
var signatures = []Signature{
	// Comparison (F Gte, Gt, Lt, Lte: Ordered; F Eq, Neq, EqEq, BangEq: Equatable).
	poly("F Gte", "op$>=", a(classOrderedSet), "boolean", "a", "a"),
	poly("F Gt", "op$>", a(classOrderedSet), "boolean", "a", "a"),
	poly("F Lt", "op$<", a(classOrderedSet), "boolean", "a", "a"),
	poly("F Lte", "op$<=", a(classOrderedSet), "boolean", "a", "a"),
	poly("F Eq", "op$=", a(classEquatableSet), "boolean", "a", "a"),
	poly("F EqEq", "op$==", a(classEquatableSet), "boolean", "a", "a"),
	poly("F Neq", "op$<>", a(classEquatableSet), "boolean", "a", "a"),
	poly("F BangEq", "op$!=", a(classEquatableSet), "boolean", "a", "a"),
	poly("F Between", "op$between", a(classOrderedSet), "boolean", "a", "a", "a"),
	varargs(poly("F In", "op$in", nil, "boolean", "a"), "a"),
	poly("F IsNull", "op$is null", nil, "boolean", "a"),
	poly("F Concat", "op$||", nil, "text", "a", "b"),

	// Logic (F And, Or, Not) and text matching (F Like, NotLike).
	mono("F And", "op$and", "boolean", "boolean", "boolean"),
	mono("F Or", "op$or", "boolean", "boolean", "boolean"),
	mono("F Not", "op$not", "boolean", "boolean"),
	mono("F Like", "op$like", "boolean", "text", "text"),

	// Arithmetic: number and double are kept apart (F BinaryPlus ... ModMoneyMoney).
	poly("F UnaryPlus", "op$+", a(classNumLikeSet), "a", "a"),
	poly("F UnaryMinus", "op$-", a(classNumLikeSet), "a", "a"),
	poly("F BinaryPlus", "op$+", a(classNumLikeSet), "a", "a", "a"),
	poly("F BinaryMinus", "op$-", a(classNumLikeSet), "a", "a", "a"),
	mono("F TimesNumNum", "op$*", "number", "number", "number"),
	mono("F TimesDoubleDouble", "op$*", "double", "double", "double"),
	mono("F TimesNumMoney", "op$*", "money", "number", "money"),
	mono("F TimesMoneyNum", "op$*", "money", "money", "number"),
	mono("F DivNumNum", "op$/", "number", "number", "number"),
	mono("F DivDoubleDouble", "op$/", "double", "double", "double"),
	mono("F DivMoneyNum", "op$/", "money", "money", "number"),
	mono("F DivMoneyMoney", "op$/", "number", "money", "money"),
	mono("F ExpNumNum", "op$^", "number", "number", "number"),
	mono("F ExpDoubleDouble", "op$^", "double", "double", "double"),
	mono("F ModNumNum", "op$%", "number", "number", "number"),
	mono("F ModDoubleDouble", "op$%", "double", "double", "double"),
	mono("F ModMoneyNum", "op$%", "money", "money", "number"),
	mono("F ModMoneyMoney", "op$%", "number", "money", "money"),

	// Timestamp ± interval (F TimeStampPlus, TimeStampMinus; the interval
	// is an ISO period literal, D functions/date_add.md: 'P1D', 'PT1H'),
	// and date/time arithmetic (F DateTimeAdd ... DateDateSub).
	poly("F TimeStampPlus", "op$+", ab(classTimestampTS, setOf("interval")), "a", "a", "b"),
	poly("F TimeStampMinus", "op$-", ab(classTimestampTS, setOf("interval")), "a", "a", "b"),
	poly("F TimeStampAdd", "date_add", ab(classTimestampTS, setOf("interval")), "a", "a", "b"),
	mono("F DateTimeAdd", "op$+", "floating_timestamp", "date", "time"),
	mono("F TimeDateAdd", "op$+", "floating_timestamp", "time", "date"),
	mono("F TimeIntervalAdd", "op$+", "time", "time", "interval"),
	mono("F IntervalTimeAdd", "op$+", "time", "interval", "time"),
	mono("F TimeIntervalSub", "op$-", "time", "time", "interval"),
	mono("F DateIntervalAdd", "op$+", "floating_timestamp", "date", "interval"),
	mono("F IntervalDateAdd", "op$+", "floating_timestamp", "interval", "date"),
	mono("F DateIntervalSub", "op$-", "floating_timestamp", "date", "interval"),
	mono("F DateDateSub", "op$-", "number", "date", "date"),

	// Aggregates. min and max: F Min, Max take Ordered (the newest version
	// leaves boolean out; the older ones take it, so it is kept).
	agg(poly("F Min", "min", a(classOrderedSet), "a", "a")),
	agg(poly("F Max", "max", a(classOrderedSet), "a", "a")),
	agg(poly("F Count", "count", nil, "number", "a")),
	agg(poly("F CountDistinct", "count_distinct", nil, "number", "a")),
	agg(poly("F Sum", "sum", a(classNumLikeSet), "a", "a")),
	agg(poly("F Avg", "avg", a(classNumLikeSet), "a", "a")),
	agg(poly("F Median", "median", a(classNumLikeSet), "a", "a")),
	agg(poly("F MedianDisc", "median", a(classOrderedSet&^classNumLikeSet), "a", "a")),
	agg(poly("F StddevPop", "stddev_pop", a(classNumLikeSet), "a", "a")),
	agg(poly("F StddevSamp", "stddev_samp", a(classNumLikeSet), "a", "a")),
	agg(mono("F RegrIntercept", "regr_intercept", "number", "number", "number")),
	agg(mono("F RegrR2", "regr_r2", "number", "number", "number")),
	agg(mono("F RegrSlope", "regr_slope", "number", "number", "number")),
	agg(poly("F Extent", "extent", a(classGeoSet), "multipolygon", "a")),

	// Choice (F Coalesce, Case, Least, Greatest).
	varargs(poly("F Coalesce", "coalesce", nil, "a", "a"), "a"),
	varargs(poly("F Case", "case", nil, "a", "boolean", "a"), "boolean", "a"),
	varargs(poly("F Least", "least", a(classOrderedSet), "a", "a"), "a"),
	varargs(poly("F Greatest", "greatest", a(classOrderedSet), "a", "a"), "a"),

	// Numbers (F NaturalLog, Absolute, Ceiling, Floor, Round: round takes
	// exactly two numbers, round(x, digits)).
	poly("F NaturalLog", "ln", a(classNumLikeSet), "a", "a"),
	poly("F Absolute", "abs", a(classNumLikeSet), "a", "a"),
	poly("F Ceiling", "ceil", a(classNumLikeSet), "a", "a"),
	poly("F Floor", "floor", a(classNumLikeSet), "a", "a"),
	mono("F Round", "round", "number", "number", "number"),
	mono("F WidthBucket", "width_bucket", "number", "number", "number", "number", "number"),

	// Text (F Contains ... Unaccent, CaselessEq ... CaselessNotOneOf).
	mono("F Contains", "contains", "boolean", "text", "text"),
	mono("F StartsWith", "starts_with", "boolean", "text", "text"),
	mono("F Lower", "lower", "text", "text"),
	mono("F Upper", "upper", "text", "text"),
	mono("F Length", "length", "number", "text"),
	mono("F SplitPart", "split_part", "text", "text", "text", "number"),
	mono("F Substr2", "substring", "text", "text", "number"),
	mono("F Substr3", "substring", "text", "text", "number", "number"),
	mono("F Chr", "chr", "text", "number"),
	mono("F Replace", "replace", "text", "text", "text", "text"),
	mono("F TrimLeading", "trim_leading", "text", "text"),
	mono("F TrimTrailing", "trim_trailing", "text", "text"),
	mono("F Trim", "trim", "text", "text"),
	mono("F LeftPad", "left_pad", "text", "text", "number", "text"),
	mono("F RightPad", "right_pad", "text", "text", "number", "text"),
	mono("F Unaccent", "unaccent", "text", "text"),
	mono("F CaselessEq", "caseless_eq", "boolean", "text", "text"),
	mono("F CaselessNe", "caseless_ne", "boolean", "text", "text"),
	mono("F CaselessStartsWith", "caseless_starts_with", "boolean", "text", "text"),
	mono("F CaselessContains", "caseless_contains", "boolean", "text", "text"),
	varargs(mono("F CaselessOneOf", "caseless_one_of", "boolean", "text", "text"), "text"),
	varargs(mono("F CaselessNotOneOf", "caseless_not_one_of", "boolean", "text", "text"), "text"),

	// Timestamps: the date_trunc_* and date_extract_* functions take a
	// floating timestamp (F FloatingTimeStampTruncYmd ...
	// FloatingTimestampExtractIsoY); a fixed timestamp needs a time zone
	// (F FixedTimeStampTruncYmdAtTimeZone ...) or the datez_* family.
	mono("F FloatingTimeStampTruncYmd", "date_trunc_ymd", "floating_timestamp", "floating_timestamp"),
	mono("F FloatingTimeStampTruncYm", "date_trunc_ym", "floating_timestamp", "floating_timestamp"),
	mono("F FloatingTimeStampTruncY", "date_trunc_y", "floating_timestamp", "floating_timestamp"),
	mono("F DateTruncYm", "date_trunc_ym", "date", "date"),
	mono("F DateTruncY", "date_trunc_y", "date", "date"),
	mono("F FixedTimeStampTruncYmdAtTimeZone", "date_trunc_ymd", "floating_timestamp", "fixed_timestamp", "text"),
	mono("F FixedTimeStampTruncYmAtTimeZone", "date_trunc_ym", "floating_timestamp", "fixed_timestamp", "text"),
	mono("F FixedTimeStampTruncYAtTimeZone", "date_trunc_y", "floating_timestamp", "fixed_timestamp", "text"),
	mono("F FixedTimeStampZTruncYmd", "datez_trunc_ymd", "fixed_timestamp", "fixed_timestamp"),
	mono("F FixedTimeStampZTruncYm", "datez_trunc_ym", "fixed_timestamp", "fixed_timestamp"),
	mono("F FixedTimeStampZTruncY", "datez_trunc_y", "fixed_timestamp", "fixed_timestamp"),
	mono("F FloatingTimeStampExtractY", "date_extract_y", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractM", "date_extract_m", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractD", "date_extract_d", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractHh", "date_extract_hh", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractMm", "date_extract_mm", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractSs", "date_extract_ss", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractDow", "date_extract_dow", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractWoy", "date_extract_woy", "number", "floating_timestamp"),
	mono("F FloatingTimestampExtractIsoY", "date_extract_iso_y", "number", "floating_timestamp"),
	poly("F TimeStampDiffD", "date_diff_d", a(classTimestampTS), "number", "a", "a"),
	mono("F DateDiffD", "date_diff_d", "number", "date", "date"),
	mono("F EpochSeconds", "epoch_seconds", "number", "fixed_timestamp"),
	mono("F ToFloatingTimestamp", "to_floating_timestamp", "floating_timestamp", "fixed_timestamp", "text"),
	mono("F GetUtcDate", "get_utc_date", "fixed_timestamp"),

	// Geometry (F WithinCircle ... IsEmpty, and the location overloads
	// F LocationWithinCircle ... LocationDistanceInMeters).
	poly("F WithinCircle", "within_circle", ab(classGeoSet, classRealNumSet), "boolean", "a", "b", "b", "b"),
	poly("F LocationWithinCircle", "within_circle", a(classRealNumSet), "boolean", "location", "a", "a", "a"),
	poly("F WithinBox", "within_box", ab(classGeoSet, classRealNumSet), "boolean", "a", "b", "b", "b", "b"),
	poly("F LocationWithinBox", "within_box", a(classRealNumSet), "boolean", "location", "a", "a", "a", "a"),
	poly("F WithinPolygon", "within_polygon", ab(classGeoSet, classGeoSet), "boolean", "a", "b"),
	poly("F LocationWithinPolygon", "within_polygon", a(classGeoSet), "boolean", "location", "a"),
	poly("F Intersects", "intersects", ab(classGeoSet, classGeoSet), "boolean", "a", "b"),
	poly("F Crosses", "crosses", ab(classGeoSet, classGeoSet), "boolean", "a", "b"),
	poly("F Overlaps", "overlaps", ab(classGeoSet, classGeoSet), "boolean", "a", "b"),
	poly("F DistanceInMeters", "distance_in_meters", ab(classGeoSet, classGeoSet), "number", "a", "b"),
	poly("F LocationDistanceInMeters", "distance_in_meters", a(classGeoSet), "number", "location", "a"),
	poly("F NumberOfPoints", "num_points", a(classGeoSet), "number", "a"),
	agg(poly("F ConvexHull (an aggregate before FunctionType came)", "convex_hull", a(classGeoSet), "multipolygon", "a")),
	poly("F Simplify", "simplify", ab(classGeoSet, classNumLikeSet), "a", "a", "b"),
	poly("F SimplifyPreserveTopology", "simplify_preserve_topology", ab(classGeoSet, classNumLikeSet), "a", "a", "b"),
	poly("F SnapToGrid", "snap_to_grid", ab(classGeoSet, classNumLikeSet), "a", "a", "b"),
	poly("F IsEmpty", "is_empty", a(classGeoSet), "boolean", "a"),
	poly("F Area", "area", a(setOf("polygon", "multipolygon")), "number", "a"),
	mono("F MakePoint", "make_point", "point", "number", "number"),

	// Casts (F castIdentities: every type to itself; F TextToFixedTimestamp
	// ... TextToRowVersion, NumberToText, NumberToMoney, NumberToDouble,
	// BoolToText, TextToBool, JsonToText ... JsonToBool, *ToText of the
	// time types, LocationToPoint). Nothing else converts: double::number,
	// point::text and number::boolean have no overload.
	mono("F TextToFixedTimestamp", "cast$fixed_timestamp", "fixed_timestamp", "text"),
	mono("F TextToFloatingTimestamp", "cast$floating_timestamp", "floating_timestamp", "text"),
	mono("F TextToDate", "cast$date", "date", "text"),
	mono("F TextToTime", "cast$time", "time", "text"),
	mono("F TextToPoint", "cast$point", "point", "text"),
	mono("F TextToMultiPoint", "cast$multipoint", "multipoint", "text"),
	mono("F TextToLine", "cast$line", "line", "text"),
	mono("F TextToMultiLine", "cast$multiline", "multiline", "text"),
	mono("F TextToPolygon", "cast$polygon", "polygon", "text"),
	mono("F TextToMultiPolygon", "cast$multipolygon", "multipolygon", "text"),
	mono("F TextToBlob", "cast$blob", "blob", "text"),
	mono("F TextToPhoto", "cast$photo", "photo", "text"),
	mono("F TextToLocation", "cast$location", "location", "text"),
	mono("F TextToPhone", "cast$phone", "phone", "text"),
	mono("F TextToUrl", "cast$url", "url", "text"),
	mono("F TextToNumber", "cast$number", "number", "text"),
	mono("F TextToMoney", "cast$money", "money", "text"),
	mono("F TextToJson", "cast$json", "json", "text"),
	mono("F TextToBool", "cast$boolean", "boolean", "text"),
	mono("F NumberToText", "cast$text", "text", "number"),
	mono("F NumberToMoney", "cast$money", "money", "number"),
	mono("F NumberToDouble", "cast$double", "double", "number"),
	mono("F BoolToText", "cast$text", "text", "boolean"),
	mono("F JsonToText", "cast$text", "text", "json"),
	mono("F JsonToNumber", "cast$number", "number", "json"),
	mono("F JsonToBool", "cast$boolean", "boolean", "json"),
	mono("F FixedTimestampToText", "cast$text", "text", "fixed_timestamp"),
	mono("F FloatingTimestampToText", "cast$text", "text", "floating_timestamp"),
	mono("F DateToText", "cast$text", "text", "date"),
	mono("F TimeToText", "cast$text", "text", "time"),
	mono("F IntervalToText", "cast$text", "text", "interval"),
	mono("F LocationToPoint", "cast$point", "point", "location"),
}

// signaturesByName indexes signatures (with the cast identities added).
var signaturesByName = func() map[string][]Signature {
	m := map[string][]Signature{}
	for _, s := range signatures {
		m[s.Name] = append(m[s.Name], s)
	}
	for _, t := range typeNames { // F castIdentities
		m["cast$"+t] = append(m["cast$"+t], mono("F castIdentities", "cast$"+t, t, t))
	}
	return m
}()

// Signatures returns the overloads of the function or operator name
// (lower-case; operators "op$+", casts "cast$number"), nil when the rules
// do not know it. The caller must not modify them.
func Signatures(name string) []Signature { return signaturesByName[strings.ToLower(name)] }

// castTarget is the type a cast's type name means ("" when unknown).
func castTarget(name string) string {
	n := strings.ToLower(name)
	switch n {
	case "numeric":
		return "number"
	case "checkbox":
		return "boolean"
	case "calendar_date":
		return "floating_timestamp"
	}
	if _, ok := typeBits[n]; ok {
		return n
	}
	return ""
}
