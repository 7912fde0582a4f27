SELECT t."t" AS "t" FROM "ds_func_0001" AS t WHERE (t."t" GLOB '*noir') ORDER BY t."_rowid" ASC LIMIT 1000
