/** One ranked hit of `ResourceCatalog.search`. Structurally the sdk's `HostToolHit`. */
export interface ToolSearchHit {
  readonly name: string;
  readonly plugin: string;
  readonly description: string;
  /** BM25F score, rounded to 4 decimals; higher is better. */
  readonly score: number;
}

/** What the index reads from each document. */
export interface SearchDocument {
  readonly name: string;
  readonly plugin: string;
  readonly description: string;
  readonly tags: readonly string[];
}

/** A BM25F index over names, tags and descriptions. */
export interface SearchIndex {
  search(query: string, limit: number): ToolSearchHit[];
}

// Field weights and length normalization: a word in the name says more than one in the prose.
const FIELDS = [
  { weight: 3, b: 0.3 }, // name
  { weight: 2, b: 0.3 }, // tags
  { weight: 1, b: 0.75 }, // description
] as const;
const K1 = 1.2;

const STOPWORDS = new Set(
  'a an and are as at be by can for from has have how i if in into is it its of on or that the their then this to was were what when which will with you your'.split(
    ' ',
  ),
);

const NON_ASCII = /[\u0080-\uffff]/;
const ASCII_SEPARATORS = /[^a-z0-9]+/;
const UNICODE_SEPARATORS = /[^\p{L}\p{N}]+/u;

// Lower-cased words; ASCII text takes the cheaper separator pattern.
function words(text: string): string[] {
  const lower = text.toLowerCase();
  return lower.split(NON_ASCII.test(lower) ? UNICODE_SEPARATORS : ASCII_SEPARATORS).filter((word) => word.length > 0);
}

/** Splits a tool name into words: on `.`, `_`, `-`, other punctuation and camelCase humps. */
export function splitName(name: string): string[] {
  return words(name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2'));
}

/** Lower-cased words of prose, without stopwords, lightly stemmed. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    if (!STOPWORDS.has(word)) out.push(stem(word));
  }
  return out;
}

// Catalog prose repeats itself; tokenizing each distinct text once keeps the first search cheap.
function memoize(tokenizer: (text: string) => string[]): (text: string) => string[] {
  const cache = new Map<string, string[]>();
  return (text) => {
    let tokens = cache.get(text);
    if (tokens === undefined) cache.set(text, (tokens = tokenizer(text)));
    return tokens;
  };
}

/** A deliberately small suffix stripper: files→file, queries→query, matches→match, reading→read. */
export function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(?:ches|shes|sses|xes|zes)$/.test(word)) return word.slice(0, -2);
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 3 && word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

function nameTokens(name: string): string[] {
  return splitName(name)
    .filter((word) => !STOPWORDS.has(word))
    .map(stem);
}

/** Builds the index once; queries are then a pass over the postings of the query's terms. */
export function createSearchIndex(documents: readonly SearchDocument[]): SearchIndex {
  const count = documents.length;
  // postings: term → parallel arrays of document indexes and term frequencies (3 per document: name, tags, description)
  const postings = new Map<string, { docs: number[]; tf: number[] }>();
  const lengths: number[] = [];
  const totals = [0, 0, 0];
  const local = new Map<string, [number, number, number]>();
  const tagTokens = memoize(tokenize);
  const descriptionTokens = memoize(tokenize);
  documents.forEach((doc, index) => {
    const fields = [nameTokens(doc.name), doc.tags.flatMap(tagTokens), descriptionTokens(doc.description)];
    local.clear();
    for (let field = 0; field < 3; field += 1) {
      const tokens = fields[field]!;
      lengths.push(tokens.length);
      totals[field]! += tokens.length;
      for (const token of tokens) {
        let tf = local.get(token);
        if (tf === undefined) local.set(token, (tf = [0, 0, 0]));
        tf[field]! += 1;
      }
    }
    for (const [token, tf] of local) {
      let posting = postings.get(token);
      if (posting === undefined) postings.set(token, (posting = { docs: [], tf: [] }));
      posting.docs.push(index);
      posting.tf.push(tf[0], tf[1], tf[2]);
    }
  });
  const averages = totals.map((total) => (count === 0 ? 0 : total / count));

  return {
    search(query, limit) {
      const terms = [...new Set([...nameTokens(query), ...tokenize(query)])];
      const scores = new Map<number, number>();
      for (const term of terms) {
        const posting = postings.get(term);
        if (posting === undefined) continue;
        const { docs, tf } = posting;
        const idf = Math.log(1 + (count - docs.length + 0.5) / (docs.length + 0.5));
        for (let at = 0; at < docs.length; at += 1) {
          const index = docs[at]!;
          let weighted = 0;
          for (let field = 0; field < 3; field += 1) {
            const frequency = tf[at * 3 + field]!;
            if (frequency === 0) continue;
            const { weight, b } = FIELDS[field]!;
            const average = averages[field]! || 1;
            weighted += (weight * frequency) / (1 - b + (b * lengths[index * 3 + field]!) / average);
          }
          scores.set(index, (scores.get(index) ?? 0) + (idf * weighted) / (K1 + weighted));
        }
      }
      return [...scores]
        .sort((left, right) => right[1] - left[1] || compare(documents[left[0]]!.name, documents[right[0]]!.name))
        .slice(0, limit)
        .map(([index, score]) => {
          const doc = documents[index]!;
          return { name: doc.name, plugin: doc.plugin, description: doc.description, score: Math.round(score * 10_000) / 10_000 };
        });
    },
  };
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
