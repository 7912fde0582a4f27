SELECT localportal_regr_slope(t."m", t."n") AS "x" FROM "ds_func_0001" AS t WHERE (t."n" IS NOT NULL) LIMIT 1000
