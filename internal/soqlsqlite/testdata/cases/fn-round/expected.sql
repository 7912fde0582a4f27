SELECT localportal_round(t."n", 0) AS "x", localportal_round(2.345, 2) AS "y" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
