SELECT sum(t."n") AS "x", sum(t."m") AS "y" FROM "ds_func_0001" AS t LIMIT 1000
