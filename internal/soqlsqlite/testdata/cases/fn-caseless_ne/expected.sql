SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (localportal_fold(t."t") != localportal_fold('bar')) LIMIT 1000
