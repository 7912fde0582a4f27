SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (instr(t."t", 'Caf') = 1) LIMIT 1000
