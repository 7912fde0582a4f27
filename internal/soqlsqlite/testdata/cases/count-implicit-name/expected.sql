SELECT count(*) AS "count", count(DISTINCT t."b") AS "count_b" FROM "ds_func_0001" AS t LIMIT 1000
