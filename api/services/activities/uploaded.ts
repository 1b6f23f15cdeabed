/** An upload as the services receive it: files already on disk (the HTTP side, api/rest/activities/multipart.ts, writes them). */
export interface UploadedFile {
  /** The client's file name (for display only; never used in a path). */
  filename: string;
  /** Where the bytes were written, inside this request's temporary directory. */
  path: string;
  size: number;
}

export interface MultipartBody {
  files: UploadedFile[];
  fields: Record<string, string[]>;
  /** Removes the request's temporary directory; call it whatever happens. Never rejects. */
  cleanup(): Promise<void>;
}
