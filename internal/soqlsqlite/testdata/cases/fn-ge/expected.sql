SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (t."m" >= 10) LIMIT 1000
