package soql

import "strings"

// This file is Socrata's type rules as data: the types, the type classes,
// the signatures (overloads) of the functions and operators, and the
// conversions a literal takes part in. The checker (types.go) and the
// offline portal (package localportal, through Signatures and
// LiteralTypes) read them.
//
// Everything here is written from reading socrata-platform/soql-reference
// (facts, not code). Each entry cites the file and line of the definition
// it rests on, at one pinned commit per file, as KEY Name:line ("F Gt:113"
// is `val Gt` at line 113 of F). Line numbers move between versions, so
// the definition's name is kept beside each:
//
//   - F: soql-stdlib/src/main/scala/com/socrata/soql/functions/SoQLFunctions.scala
//     at commit 8ddcc411206c4a7bf8a199925631672c10c4d48c (1007 lines; it
//     defines round, date_add and the caseless family).
//   - C: soql-stdlib/src/main/scala/com/socrata/soql/functions/SoQLTypeClasses.scala
//     at commit 4269ea73215194f4610c460694e158b603968476 (36 lines; the
//     classes).
//   - I: soql-stdlib/src/main/scala/com/socrata/soql/functions/SoQLTypeInfo.scala
//     at commit c46303339a28f8770599d4692119abdbfb138eab (428 lines;
//     stringConversions, stringLiteralExpr, numberLiteralExpr, isOrdered,
//     isBoolean, isGroupable).
//   - E: soql-analyzer/src/main/scala/com/socrata/soql/exceptions/Exceptions.scala
//     at commit dbf987d1ab9d915a5623ade707b9311d63ab9b97 (234 lines; the
//     SoQLException classes, their codes and error texts).
//   - D: dev.socrata.com docs (socrata/dev.socrata.com, docs/functions/*.md),
//     cited by page path.
//
// Each commit is one at which the search index stores that file (the
// files' versions are not all stored at one commit); F is the stored
// version that defines round, date_add and the caseless family (the only
// one the index finds with caseless_not_one_of). C is older than F: at
// its commit it has no PointLike, LineLike or PolygonLike (another stored
// version, whose commit was not found, defines them; GeospatialLike, C:22,
// lists the same six types). Where the sources disagree between versions (min and max
// of a boolean, a number literal against a double), the rule that
// accepts more is kept: the checker only refuses what the portal surely
// refuses.

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
	// C Ordered:7: what <, >, BETWEEN, ORDER BY, min and max take.
	classOrderedSet = setOf("text", "number", "double", "money", "boolean", "fixed_timestamp",
		"floating_timestamp", "date", "time", "url")
	// C GeospatialLike:22 (later versions: PointLike ++ LineLike ++
	// PolygonLike, not in the pinned C).
	classGeoSet = setOf("point", "multipoint", "line", "multiline", "polygon", "multipolygon")
	// C Equatable:24: what = and != and GROUP BY take (document is in no class).
	classEquatableSet = classOrderedSet | classGeoSet | setOf("blob", "phone", "photo", "location", "url", "json")
	// C NumLike:33 and RealNumLike:34.
	classNumLikeSet  = setOf("number", "double", "money")
	classRealNumSet  = setOf("number", "double")
	classTimestampTS = setOf("fixed_timestamp", "floating_timestamp") // C TimestampLike:35
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
	// Comparison (F Gte:110, Gt:113, Lt:116, Lte:119: Ordered; F Eq:122,
	// Neq:126, EqEq:125, BangEq:129: Equatable).
	poly("F Gte:110", "op$>=", a(classOrderedSet), "boolean", "a", "a"),
	poly("F Gt:113", "op$>", a(classOrderedSet), "boolean", "a", "a"),
	poly("F Lt:116", "op$<", a(classOrderedSet), "boolean", "a", "a"),
	poly("F Lte:119", "op$<=", a(classOrderedSet), "boolean", "a", "a"),
	poly("F Eq:122", "op$=", a(classEquatableSet), "boolean", "a", "a"),
	poly("F EqEq:125", "op$==", a(classEquatableSet), "boolean", "a", "a"),
	poly("F Neq:126", "op$<>", a(classEquatableSet), "boolean", "a", "a"),
	poly("F BangEq:129", "op$!=", a(classEquatableSet), "boolean", "a", "a"),
	poly("F Between:318", "op$between", a(classOrderedSet), "boolean", "a", "a", "a"),
	varargs(poly("F In:487", "op$in", nil, "boolean", "a"), "a"),
	poly("F IsNull:311", "op$is null", nil, "boolean", "a"),
	poly("F Concat:107", "op$||", nil, "text", "a", "b"),

	// Logic (F And:477, Or:480, Not:483) and text matching (F Like:494,
	// NotLike:497).
	mono("F And:477", "op$and", "boolean", "boolean", "boolean"),
	mono("F Or:480", "op$or", "boolean", "boolean", "boolean"),
	mono("F Not:483", "op$not", "boolean", "boolean"),
	mono("F Like:494", "op$like", "boolean", "text", "text"),

	// Arithmetic: number and double are kept apart (F BinaryPlus:401 ...
	// ModMoneyMoney:450).
	poly("F UnaryPlus:387", "op$+", a(classNumLikeSet), "a", "a"),
	poly("F UnaryMinus:390", "op$-", a(classNumLikeSet), "a", "a"),
	poly("F BinaryPlus:401", "op$+", a(classNumLikeSet), "a", "a", "a"),
	poly("F BinaryMinus:404", "op$-", a(classNumLikeSet), "a", "a", "a"),
	mono("F TimesNumNum:408", "op$*", "number", "number", "number"),
	mono("F TimesDoubleDouble:411", "op$*", "double", "double", "double"),
	mono("F TimesNumMoney:414", "op$*", "money", "number", "money"),
	mono("F TimesMoneyNum:417", "op$*", "money", "money", "number"),
	mono("F DivNumNum:421", "op$/", "number", "number", "number"),
	mono("F DivDoubleDouble:424", "op$/", "double", "double", "double"),
	mono("F DivMoneyNum:427", "op$/", "money", "money", "number"),
	mono("F DivMoneyMoney:430", "op$/", "number", "money", "money"),
	mono("F ExpNumNum:434", "op$^", "number", "number", "number"),
	mono("F ExpDoubleDouble:437", "op$^", "double", "double", "double"),
	mono("F ModNumNum:441", "op$%", "number", "number", "number"),
	mono("F ModDoubleDouble:444", "op$%", "double", "double", "double"),
	mono("F ModMoneyNum:447", "op$%", "money", "money", "number"),
	mono("F ModMoneyMoney:450", "op$%", "number", "money", "money"),

	// Timestamp ± interval (F TimeStampPlus:750, TimeStampMinus:754; the
	// interval is an ISO period literal, "interval (ISO period format)" in
	// their docs, 'P1D', 'PT1H'; the page D functions/date_add.md is not
	// among the stored dev.socrata.com pages), and date/time arithmetic
	// (F DateTimeAdd:643 ... DateDateSub:672).
	poly("F TimeStampPlus:750", "op$+", ab(classTimestampTS, setOf("interval")), "a", "a", "b"),
	poly("F TimeStampMinus:754", "op$-", ab(classTimestampTS, setOf("interval")), "a", "a", "b"),
	poly("F TimeStampAdd:746", "date_add", ab(classTimestampTS, setOf("interval")), "a", "a", "b"),
	mono("F DateTimeAdd:643", "op$+", "floating_timestamp", "date", "time"),
	mono("F TimeDateAdd:646", "op$+", "floating_timestamp", "time", "date"),
	mono("F TimeIntervalAdd:650", "op$+", "time", "time", "interval"),
	mono("F IntervalTimeAdd:653", "op$+", "time", "interval", "time"),
	mono("F TimeIntervalSub:656", "op$-", "time", "time", "interval"),
	mono("F DateIntervalAdd:663", "op$+", "floating_timestamp", "date", "interval"),
	mono("F IntervalDateAdd:666", "op$+", "floating_timestamp", "interval", "date"),
	mono("F DateIntervalSub:669", "op$-", "floating_timestamp", "date", "interval"),
	mono("F DateDateSub:672", "op$-", "number", "date", "date"),

	// Aggregates. min and max: F Min:344, Max:347 take Ordered (the pinned
	// version leaves boolean out, Ordered - SoQLBoolean; the older ones take
	// it, so it is kept).
	agg(poly("F Min:344", "min", a(classOrderedSet), "a", "a")),
	agg(poly("F Max:347", "max", a(classOrderedSet), "a", "a")),
	agg(poly("F Count:353", "count", nil, "number", "a")),
	agg(poly("F CountDistinct:356", "count_distinct", nil, "number", "a")),
	agg(poly("F Sum:359", "sum", a(classNumLikeSet), "a", "a")),
	agg(poly("F Avg:362", "avg", a(classNumLikeSet), "a", "a")),
	agg(poly("F Median:365", "median", a(classNumLikeSet), "a", "a")),
	agg(poly("F MedianDisc:368", "median", a(classOrderedSet&^classNumLikeSet), "a", "a")),
	agg(poly("F StddevPop:380", "stddev_pop", a(classNumLikeSet), "a", "a")),
	agg(poly("F StddevSamp:383", "stddev_samp", a(classNumLikeSet), "a", "a")),
	agg(mono("F RegrIntercept:371", "regr_intercept", "number", "number", "number")),
	agg(mono("F RegrR2:374", "regr_r2", "number", "number", "number")),
	agg(mono("F RegrSlope:377", "regr_slope", "number", "number", "number")),
	agg(poly("F Extent:190", "extent", a(classGeoSet), "multipolygon", "a")),

	// Choice (F Coalesce:953, Case:934, Least:337, Greatest:340).
	varargs(poly("F Coalesce:953", "coalesce", nil, "a", "a"), "a"),
	varargs(poly("F Case:934", "case", nil, "a", "boolean", "a"), "boolean", "a"),
	varargs(poly("F Least:337", "least", a(classOrderedSet), "a", "a"), "a"),
	varargs(poly("F Greatest:340", "greatest", a(classOrderedSet), "a", "a"), "a"),

	// Numbers (F NaturalLog:454, Absolute:457, Ceiling:460, Floor:463,
	// Round:466: round takes exactly two numbers, round(x, digits)).
	poly("F NaturalLog:454", "ln", a(classNumLikeSet), "a", "a"),
	poly("F Absolute:457", "abs", a(classNumLikeSet), "a", "a"),
	poly("F Ceiling:460", "ceil", a(classNumLikeSet), "a", "a"),
	poly("F Floor:463", "floor", a(classNumLikeSet), "a", "a"),
	mono("F Round:466", "round", "number", "number", "number"),
	mono("F WidthBucket:601", "width_bucket", "number", "number", "number", "number", "number"),

	// Text (F Contains:501 ... Unaccent:560, CaselessEq:131 ...
	// CaselessNotOneOf:146).
	mono("F Contains:501", "contains", "boolean", "text", "text"),
	mono("F StartsWith:504", "starts_with", "boolean", "text", "text"),
	mono("F Lower:507", "lower", "text", "text"),
	mono("F Upper:510", "upper", "text", "text"),
	mono("F Length:514", "length", "number", "text"),
	mono("F SplitPart:518", "split_part", "text", "text", "text", "number"),
	mono("F Substr2:522", "substring", "text", "text", "number"),
	mono("F Substr3:527", "substring", "text", "text", "number", "number"),
	mono("F Chr:532", "chr", "text", "number"),
	mono("F Replace:536", "replace", "text", "text", "text", "text"),
	mono("F TrimLeading:540", "trim_leading", "text", "text"),
	mono("F TrimTrailing:544", "trim_trailing", "text", "text"),
	mono("F Trim:548", "trim", "text", "text"),
	mono("F LeftPad:552", "left_pad", "text", "text", "number", "text"),
	mono("F RightPad:556", "right_pad", "text", "text", "number", "text"),
	mono("F Unaccent:560", "unaccent", "text", "text"),
	mono("F CaselessEq:131", "caseless_eq", "boolean", "text", "text"),
	mono("F CaselessNe:134", "caseless_ne", "boolean", "text", "text"),
	mono("F CaselessStartsWith:137", "caseless_starts_with", "boolean", "text", "text"),
	mono("F CaselessContains:140", "caseless_contains", "boolean", "text", "text"),
	varargs(mono("F CaselessOneOf:143", "caseless_one_of", "boolean", "text", "text"), "text"),
	varargs(mono("F CaselessNotOneOf:146", "caseless_not_one_of", "boolean", "text", "text"), "text"),

	// Timestamps: the date_trunc_* and date_extract_* functions take a
	// floating timestamp (F FloatingTimeStampTruncYmd:606 ...
	// FloatingTimestampExtractIsoY:706); a fixed timestamp needs a time
	// zone (F FixedTimeStampTruncYmdAtTimeZone:723 ...) or the datez_*
	// family (F FixedTimeStampZTruncYmd:713 ...).
	mono("F FloatingTimeStampTruncYmd:606", "date_trunc_ymd", "floating_timestamp", "floating_timestamp"),
	mono("F FloatingTimeStampTruncYm:609", "date_trunc_ym", "floating_timestamp", "floating_timestamp"),
	mono("F FloatingTimeStampTruncY:612", "date_trunc_y", "floating_timestamp", "floating_timestamp"),
	mono("F DateTruncYm:615", "date_trunc_ym", "date", "date"),
	mono("F DateTruncY:618", "date_trunc_y", "date", "date"),
	mono("F FixedTimeStampTruncYmdAtTimeZone:723", "date_trunc_ymd", "floating_timestamp", "fixed_timestamp", "text"),
	mono("F FixedTimeStampTruncYmAtTimeZone:726", "date_trunc_ym", "floating_timestamp", "fixed_timestamp", "text"),
	mono("F FixedTimeStampTruncYAtTimeZone:729", "date_trunc_y", "floating_timestamp", "fixed_timestamp", "text"),
	mono("F FixedTimeStampZTruncYmd:713", "datez_trunc_ymd", "fixed_timestamp", "fixed_timestamp"),
	mono("F FixedTimeStampZTruncYm:716", "datez_trunc_ym", "fixed_timestamp", "fixed_timestamp"),
	mono("F FixedTimeStampZTruncY:719", "datez_trunc_y", "fixed_timestamp", "fixed_timestamp"),
	mono("F FloatingTimeStampExtractY:676", "date_extract_y", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractM:679", "date_extract_m", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractD:682", "date_extract_d", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractHh:685", "date_extract_hh", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractMm:688", "date_extract_mm", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractSs:691", "date_extract_ss", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractDow:694", "date_extract_dow", "number", "floating_timestamp"),
	mono("F FloatingTimeStampExtractWoy:700", "date_extract_woy", "number", "floating_timestamp"),
	mono("F FloatingTimestampExtractIsoY:706", "date_extract_iso_y", "number", "floating_timestamp"),
	poly("F TimeStampDiffD:733", "date_diff_d", a(classTimestampTS), "number", "a", "a"),
	mono("F DateDiffD:738", "date_diff_d", "number", "date", "date"),
	mono("F EpochSeconds:742", "epoch_seconds", "number", "fixed_timestamp"),
	mono("F ToFloatingTimestamp:759", "to_floating_timestamp", "floating_timestamp", "fixed_timestamp", "text"),
	mono("F GetUtcDate:763", "get_utc_date", "fixed_timestamp"),

	// Geometry (F WithinCircle:155 ... IsEmpty:306, and the location
	// overloads F LocationWithinCircle:835 ... LocationDistanceInMeters:852).
	poly("F WithinCircle:155", "within_circle", ab(classGeoSet, classRealNumSet), "boolean", "a", "b", "b", "b"),
	poly("F LocationWithinCircle:835", "within_circle", a(classRealNumSet), "boolean", "location", "a", "a", "a"),
	poly("F WithinBox:159", "within_box", ab(classGeoSet, classRealNumSet), "boolean", "a", "b", "b", "b", "b"),
	poly("F LocationWithinBox:841", "within_box", a(classRealNumSet), "boolean", "location", "a", "a", "a", "a"),
	poly("F WithinPolygon:162", "within_polygon", ab(classGeoSet, classGeoSet), "boolean", "a", "b"),
	poly("F LocationWithinPolygon:847", "within_polygon", a(classGeoSet), "boolean", "location", "a"),
	poly("F Intersects:217", "intersects", ab(classGeoSet, classGeoSet), "boolean", "a", "b"),
	poly("F Crosses:220", "crosses", ab(classGeoSet, classGeoSet), "boolean", "a", "b"),
	poly("F Overlaps:223", "overlaps", ab(classGeoSet, classGeoSet), "boolean", "a", "b"),
	poly("F DistanceInMeters:235", "distance_in_meters", ab(classGeoSet, classGeoSet), "number", "a", "b"),
	poly("F LocationDistanceInMeters:852", "distance_in_meters", a(classGeoSet), "number", "location", "a"),
	poly("F NumberOfPoints:284", "num_points", a(classGeoSet), "number", "a"),
	agg(poly("F ConvexHull:196 (FunctionType.Normal there; an aggregate in versions before FunctionType)", "convex_hull", a(classGeoSet), "multipolygon", "a")),
	poly("F Simplify:287", "simplify", ab(classGeoSet, classNumLikeSet), "a", "a", "b"),
	poly("F SimplifyPreserveTopology:290", "simplify_preserve_topology", ab(classGeoSet, classNumLikeSet), "a", "a", "b"),
	poly("F SnapToGrid:296", "snap_to_grid", ab(classGeoSet, classNumLikeSet), "a", "a", "b"),
	poly("F IsEmpty:306", "is_empty", a(classGeoSet), "boolean", "a"),
	poly("F Area:231", "area", a(setOf("polygon", "multipolygon")), "number", "a"),
	mono("F MakePoint:150", "make_point", "point", "number", "number"),

	// Casts (F castIdentities:790: every type to itself; F
	// TextToFixedTimestamp:58 ... TextToUrl:103, TextToRowVersion:917,
	// NumberToText:792, NumberToMoney:470, NumberToDouble:473,
	// BoolToText:810, TextToBool:807, JsonToText:898 ... JsonToBool:904,
	// FixedTimestampToText:769 ... IntervalToText:781, LocationToPoint:828).
	// Nothing else converts: double::number, point::text and
	// number::boolean have no overload.
	mono("F TextToFixedTimestamp:58", "cast$fixed_timestamp", "fixed_timestamp", "text"),
	mono("F TextToFloatingTimestamp:61", "cast$floating_timestamp", "floating_timestamp", "text"),
	mono("F TextToDate:64", "cast$date", "date", "text"),
	mono("F TextToTime:67", "cast$time", "time", "text"),
	mono("F TextToPoint:73", "cast$point", "point", "text"),
	mono("F TextToMultiPoint:76", "cast$multipoint", "multipoint", "text"),
	mono("F TextToLine:79", "cast$line", "line", "text"),
	mono("F TextToMultiLine:82", "cast$multiline", "multiline", "text"),
	mono("F TextToPolygon:85", "cast$polygon", "polygon", "text"),
	mono("F TextToMultiPolygon:88", "cast$multipolygon", "multipolygon", "text"),
	mono("F TextToBlob:91", "cast$blob", "blob", "text"),
	mono("F TextToPhoto:94", "cast$photo", "photo", "text"),
	mono("F TextToLocation:97", "cast$location", "location", "text"),
	mono("F TextToPhone:100", "cast$phone", "phone", "text"),
	mono("F TextToUrl:103", "cast$url", "url", "text"),
	mono("F TextToNumber:795", "cast$number", "number", "text"),
	mono("F TextToMoney:803", "cast$money", "money", "text"),
	mono("F TextToJson:799", "cast$json", "json", "text"),
	mono("F TextToBool:807", "cast$boolean", "boolean", "text"),
	mono("F NumberToText:792", "cast$text", "text", "number"),
	mono("F NumberToMoney:470", "cast$money", "money", "number"),
	mono("F NumberToDouble:473", "cast$double", "double", "number"),
	mono("F BoolToText:810", "cast$text", "text", "boolean"),
	mono("F JsonToText:898", "cast$text", "text", "json"),
	mono("F JsonToNumber:901", "cast$number", "number", "json"),
	mono("F JsonToBool:904", "cast$boolean", "boolean", "json"),
	mono("F FixedTimestampToText:769", "cast$text", "text", "fixed_timestamp"),
	mono("F FloatingTimestampToText:772", "cast$text", "text", "floating_timestamp"),
	mono("F DateToText:775", "cast$text", "text", "date"),
	mono("F TimeToText:778", "cast$text", "text", "time"),
	mono("F IntervalToText:781", "cast$text", "text", "interval"),
	mono("F LocationToPoint:828", "cast$point", "point", "location"),
}

// signaturesByName indexes signatures (with the cast identities added).
var signaturesByName = func() map[string][]Signature {
	m := map[string][]Signature{}
	for _, s := range signatures {
		m[s.Name] = append(m[s.Name], s)
	}
	for _, t := range typeNames { // F castIdentities:790
		m["cast$"+t] = append(m["cast$"+t], mono("F castIdentities:790", "cast$"+t, t, t))
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
