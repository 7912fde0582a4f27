SELECT t."b" AS "b", count(*) AS "c" FROM "ds_func_0001" AS t GROUP BY t."b" HAVING (count(*) > 1) LIMIT 1000
