SELECT (t."m" * 2) AS "double" FROM "ds_func_0001" AS t WHERE ((t."m" * 2) > 30) ORDER BY t."_rowid" ASC LIMIT 1000
