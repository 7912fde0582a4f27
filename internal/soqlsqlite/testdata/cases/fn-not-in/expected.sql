SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (t."t" NOT IN ('BAR')) LIMIT 1000
