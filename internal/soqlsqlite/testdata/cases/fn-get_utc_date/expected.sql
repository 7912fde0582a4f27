SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (t."f" < '2026-06-01T12:00:00.000Z') LIMIT 1000
