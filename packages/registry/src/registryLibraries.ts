// The registry's heavy libraries, loaded as one unit by prepareRegistry(): the manifest parser
// (smol-toml + the zod schema) and ajv. A manifest can carry a `config_schema`, which ajv must
// check even when the config sets nothing, so whatever can produce a manifest brings the
// validator with it: there is no state in which one is loaded and the other is not.
import { Ajv } from 'ajv';

export { parseManifest } from './parseManifest.ts';
export { Ajv };
