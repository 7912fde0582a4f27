SELECT count(*) AS "a", count(t."n") AS "b", count(DISTINCT t."m") AS "c" FROM "ds_func_0001" AS t LIMIT 1000
