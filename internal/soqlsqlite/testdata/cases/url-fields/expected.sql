SELECT json_extract(t."u", '$.url') AS "url", json_extract(t."u", '$.description') AS "description" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
