SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (t."d" <= '2024-01-01T00:00:00.000') LIMIT 1000
