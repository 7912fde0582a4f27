SELECT min(t."d") AS "x", min(t."t") AS "y" FROM "ds_func_0001" AS t LIMIT 1000
