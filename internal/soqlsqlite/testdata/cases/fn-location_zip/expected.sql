SELECT json_extract(json_extract(t."l", '$.human_address'), '$.zip') AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
