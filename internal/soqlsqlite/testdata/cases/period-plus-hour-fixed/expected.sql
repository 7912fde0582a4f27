SELECT localportal_ts_shift(t."f", 0, 0, 0, 1, 0, 0, +1, 1) AS "x" FROM "ds_form_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
