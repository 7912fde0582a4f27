SELECT localportal_row_id(t."_rowid") AS ":id", '2026-01-01T00:00:00.000Z' AS ":created_at", '2026-01-01T00:00:00.000Z' AS ":updated_at" FROM "ds_func_0001" AS t ORDER BY t."_rowid" ASC LIMIT 1
