import { countTokens } from '@anthropic-ai/tokenizer';
import fs from 'fs';
const text = fs.readFileSync(0, 'utf8');
console.log(countTokens(text));
