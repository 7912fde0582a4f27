SELECT CAST(substr(t."d", 12, 2) AS INTEGER) AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
