SELECT avg(t."n") AS "x" FROM "ds_func_0001" AS t LIMIT 1000
