/**
 * The registry of every format the product decodes with, in `auto`'s tie-break order: formats
 * that claim a topic by name first, then schema-based formats, text and binary primitives, raw
 * bytes last.
 */
import { FormatRegistry } from './format.ts';
import { avroContainerFormat, avroFormat } from './formats/avro.ts';
import { confluentFormat } from './formats/confluent.ts';
import { INTERNAL_TOPIC_FORMATS } from './formats/internal-topics.ts';
import { jsonFormat, msgpackFormat } from './formats/json.ts';
import { PRIMITIVE_FORMATS } from './formats/primitives.ts';

/** A new registry with every format. */
export function defaultFormatRegistry(): FormatRegistry {
  return new FormatRegistry([...INTERNAL_TOPIC_FORMATS, jsonFormat, confluentFormat, avroContainerFormat, avroFormat, msgpackFormat, ...PRIMITIVE_FORMATS]);
}
