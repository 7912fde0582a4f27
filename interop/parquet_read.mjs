// Reads a Parquet file with hyparquet (a Parquet reader written
// independently of the Go writer datasf-mcp uses) and prints its schema,
// its row groups and its rows as one JSON object.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet'

const file = await asyncBufferFromFile(process.argv[2])
const metadata = await parquetMetadataAsync(file)
const schema = parquetSchema(metadata).children.map(c => ({ name: c.element.name, type: c.element.type, repetition: c.element.repetition_type }))
const rows = await parquetReadObjects({ file })
process.stdout.write(JSON.stringify({ schema, row_groups: metadata.row_groups.length, rows }) + '\n')
