SELECT localportal_regr_intercept(t."m", t."n") AS "x" FROM "ds_func_0001" AS t LIMIT 1000
