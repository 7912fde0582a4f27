SELECT (CASE WHEN (t."n" > 3) THEN 'big' ELSE 'other' END) AS "x" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1000
