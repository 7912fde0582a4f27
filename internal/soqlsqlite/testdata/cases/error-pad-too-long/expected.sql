SELECT localportal_pad('7', 1048577, 'x', 1) AS "x" FROM "ds_func_0001" AS t LIMIT 1
