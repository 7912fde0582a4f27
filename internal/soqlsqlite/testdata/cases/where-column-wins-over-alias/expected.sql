SELECT t."m" AS "n" FROM "ds_func_0001" AS t WHERE (t."n" > 0) ORDER BY t."_rowid" ASC LIMIT 1000
