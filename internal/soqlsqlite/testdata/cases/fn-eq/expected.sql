SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (t."t" = 'BAR') LIMIT 1000
