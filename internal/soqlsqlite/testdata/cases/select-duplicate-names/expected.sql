SELECT t."t" AS "t", t."t" AS "t_1", t."m" AS "t_2" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
