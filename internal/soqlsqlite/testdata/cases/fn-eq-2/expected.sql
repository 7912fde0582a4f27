SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (t."t" = 'bar') LIMIT 1000
