SELECT localportal_ts_shift(t."d", 0, 0, 1, 0, 0, 0, +1, 0) AS "x" FROM "ds_form_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
