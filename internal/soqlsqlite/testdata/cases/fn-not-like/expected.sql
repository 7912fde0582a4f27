SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (t."t" NOT GLOB 'B*') LIMIT 1000
