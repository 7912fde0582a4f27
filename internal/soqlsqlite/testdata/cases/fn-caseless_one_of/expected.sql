SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (localportal_fold(t."t") IN (localportal_fold('bar'), localportal_fold('café noir'))) LIMIT 1000
