SELECT json_extract(t."p", '$.coordinates[1]') AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
