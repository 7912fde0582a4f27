SELECT coalesce(t."t", 'none') AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1000
