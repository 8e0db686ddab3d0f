import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../dev/emulators/dynamodb-local";

/** The AWS SDK client config for a local emulator at `endpoint`: local credentials and region, one attempt only. */
export function localClientConfig(endpoint: string) {
    return { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 };
}
