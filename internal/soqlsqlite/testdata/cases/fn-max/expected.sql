SELECT max(t."d") AS "x", max(t."n") AS "y" FROM "ds_func_0001" AS t LIMIT 1000
