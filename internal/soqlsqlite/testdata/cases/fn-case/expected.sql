SELECT (CASE WHEN (t."n" > 3) THEN 'big' WHEN (t."n" > 0) THEN 'small' END) AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1000
