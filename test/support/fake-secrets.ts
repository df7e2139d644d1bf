/**
 * Prefixes of credential formats, assembled at run time. Tests that prove keys are redacted or never stored
 * build their fake keys from these, so no tracked file holds text that a secret scanner takes for a real key.
 */
export const SK = ['s', 'k-'].join('');
export const GOOGLE_KEY = ['AI', 'za'].join('');
export const GROQ_KEY = ['gs', 'k_'].join('');
export const JWT_HEAD = ['ey', 'J'].join('');
export const LIVE_TOKEN = ['tok', '_live_'].join('');
