export const forward = (body) => body;
export const backward = (body) => body;
