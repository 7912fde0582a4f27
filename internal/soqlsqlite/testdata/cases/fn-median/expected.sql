SELECT localportal_median(t."m") AS "x" FROM "ds_func_0001" AS t LIMIT 1000
