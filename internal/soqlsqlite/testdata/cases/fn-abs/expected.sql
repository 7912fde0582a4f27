SELECT abs(t."n") AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 2
