/** The methods HTTP services commonly use; any other is a token a client made up (metrics label it OTHER). */
export const STANDARD_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
