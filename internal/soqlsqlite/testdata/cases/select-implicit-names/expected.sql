SELECT t."t" AS "t", localportal_upper(t."t") AS "upper_t", count(*) AS "count" FROM "ds_func_0001" AS t GROUP BY t."t" ORDER BY t."t" ASC NULLS LAST LIMIT 1000
