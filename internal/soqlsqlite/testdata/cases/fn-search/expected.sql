SELECT t."t" AS "t" FROM "ds_func_0001" AS t WHERE ((instr(lower(t."t"), 'noir') > 0)) ORDER BY t."_rowid" ASC LIMIT 1000
