SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (instr(t."t", 'oir') > 0) LIMIT 1000
