SELECT count(*) AS "c" FROM "ds_form_0001" AS t WHERE (localportal_ts_shift(t."d", 0, 0, 1, 0, 0, 0, +1, 0) >= '2023-01-16T00:00:00.000') LIMIT 1000
