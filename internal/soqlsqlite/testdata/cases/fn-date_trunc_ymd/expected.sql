SELECT (CASE WHEN t."d" IS NULL THEN NULL ELSE substr(t."d", 1, 10) || 'T00:00:00.000' END) AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
