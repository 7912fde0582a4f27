SELECT t."t" AS "t" FROM "ds_func_0001" AS t WHERE (t."n" NOT BETWEEN 2 AND 4) ORDER BY t."_rowid" ASC LIMIT 1000
