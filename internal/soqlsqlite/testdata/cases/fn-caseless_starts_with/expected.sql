SELECT count(*) AS "x" FROM "ds_func_0001" AS t WHERE (instr(localportal_fold(t."t"), localportal_fold('CAF')) = 1) LIMIT 1000
